#!/bin/bash
# No queue and no order left.
[ "$(aws sqs list-queues --queue-name-prefix labex-q05-jobs --query 'length(QueueUrls || `[]`)' --output text)" = 0 ] \
  && [ "$(aws dynamodb scan --table-name labex-q05-orders --select COUNT --query Count --output text)" = 0 ]
