#!/bin/bash
# AWS View's own checkpoints of step 3: the error in the log.
awsview verify 3 --lab "${AWSVIEW_LAB:-lambda-diagnose}"
