"""The wire protocols: ``types`` (typed fields, one generic codec), ``v07`` (the 0.7 requests and responses)."""
