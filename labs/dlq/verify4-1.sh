#!/bin/bash
# AWS View's own checkpoints of step 4: both queues empty, the poison job processed.
awsview verify 4 --lab "${AWSVIEW_LAB:-dlq}"
