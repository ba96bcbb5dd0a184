"""The wire protocols: ``types`` (typed fields, one generic codec; ``flexible``: the KIP-482 compact types and
tag buffers) and ``schema`` (the ``Struct`` classes, classic or flexible),
``v07`` (the 0.7 requests and responses), ``v08`` (the 0.8/0.9 headers and the (api key, version) registry) with
the schemas per API family (``produce``, ``fetch``, ``offsets``, ``metadata``, ``offset_commit``,
``api_versions``, ``inter_broker``, ``group_membership``), ``api_keys`` and ``errors`` (the error codes).

The offset-request times both lines (and the log that answers them) share are defined here.
"""

LATEST_TIME = -1  # an offsets request's time for the log end
EARLIEST_TIME = -2  # an offsets request's time for the start of the oldest segment
