#!/bin/bash
# AWS View's own checkpoints of step 2: the first order accepted once.
awsview verify 2 --lab "${AWSVIEW_LAB:-q05}"
