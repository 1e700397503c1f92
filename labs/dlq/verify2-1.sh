#!/bin/bash
# AWS View's own checkpoints of step 2 (read-only, as the viewer reads them).
awsview verify 2 --lab "${AWSVIEW_LAB:-dlq}"
