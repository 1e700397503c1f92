#!/bin/bash
# The deployed code is the zip of the fixed worker.
ZIP=~/project/worker_fixed.zip
[ -f "$ZIP" ] || exit 1
[ "$(aws lambda get-function --function-name labex-dlq-worker --query Configuration.CodeSha256 --output text)" \
  = "$(openssl dgst -sha256 -binary "$ZIP" | base64)" ]
