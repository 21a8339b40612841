"""The grundy.v1 messages and service stubs, generated from proto/grundy/v1/ by
scripts/python-stubs.sh: do not edit."""
