#!/bin/bash
# AWS View's own checkpoints of step 3: repeats rejected, the other order accepted.
awsview verify 3 --lab "${AWSVIEW_LAB:-q05}"
