"""The wire protocols: ``types`` (typed fields, one generic codec), ``v07`` (the 0.7 requests and responses),
``v08`` / ``inter_broker`` / ``group_membership`` (the 0.8/0.9 APIs) and ``errors`` (the error codes).

The offset-request times both lines (and the log that answers them) share are defined here.
"""

LATEST_TIME = -1  # an offsets request's time for the log end
EARLIEST_TIME = -2  # an offsets request's time for the start of the oldest segment
