"""Longer help texts of the command line."""

EMULATOR_HELP = """\
Run the embedded lab emulator: moto server, real Lambda code, the write-decision journal.
It runs the code it is sent as you, so it answers only its own clients:

  - it listens on loopback (127.0.0.1) unless --host and --allow-remote say otherwise;
  - it answers only to the host names it listens on (no DNS rebinding) and refuses requests
    that web pages send (an Origin header), except from origins given with --cors-origin;
  - off loopback, a token is mandatory (--token or AWSVIEW_TOKEN, 12+ characters) and every
    client uses it as its access key id: AWS_ACCESS_KEY_ID=<token> (the AWS CLI, boto3 and
    awsview sign with it; the secret key can be anything);
  - only the services the labs use are on (DynamoDB and its streams, SQS, Step Functions,
    Lambda, CloudWatch Logs, IAM, STS); --enable-service switches on another;
  - CloudFormation templates cannot construct Python objects."""
EMULATOR_EXAMPLE = """\
example, for a class on the local network:
  AWSVIEW_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))') \\
    awsview emulator --host 0.0.0.0 --allow-remote
  learners: export AWS_ENDPOINT_URL=http://<this machine>:5000 AWS_ACCESS_KEY_ID=<token> \\
    AWS_SECRET_ACCESS_KEY=anything AWS_DEFAULT_REGION=us-east-1"""
