"""Sockets for every protocol line: ``send`` (response parts, file regions, sendfile), ``framing`` (size-prefixed
frames in), ``server`` (the broker's listener) and ``client`` (one blocking channel to a broker)."""
