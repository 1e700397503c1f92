#!/bin/bash
# AWS View's own checkpoints of step 2: the timeout in the log.
awsview verify 2 --lab "${AWSVIEW_LAB:-lambda-diagnose}"
