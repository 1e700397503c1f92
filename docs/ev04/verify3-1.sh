#!/bin/bash
# AWS View's own checkpoints of step 3 (read-only, as the viewer reads them).
awsview verify 3 --lab "${AWSVIEW_LAB:-ev04}"
