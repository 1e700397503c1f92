#!/bin/bash
# The jobs queue redrives to the DLQ after two receives.
URL=$(aws sqs get-queue-url --queue-name labex-dlq-jobs --query QueueUrl --output text) || exit 1
aws sqs get-queue-attributes --queue-url "$URL" --attribute-names RedrivePolicy \
  --query Attributes.RedrivePolicy --output text \
  | jq -e '(.maxReceiveCount | tostring) == "2" and (.deadLetterTargetArn | endswith(":labex-dlq-jobs-dlq"))' >/dev/null
