#!/bin/bash
# No queue and no mapping of the lab is left.
[ "$(aws sqs list-queues --queue-name-prefix labex-dlq- --query 'length(QueueUrls || `[]`)' --output text)" = 0 ] \
  && [ "$(aws lambda list-event-source-mappings --function-name labex-dlq-worker --query 'length(EventSourceMappings)' --output text)" = 0 ]
