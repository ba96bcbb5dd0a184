"""Messages and message sets of both lines: the 0.7 message (``message07``), the codecs (``compression``), the
one entry walker (``entries``), deep iteration on top of it (``deep_iterator``) and the entry formats they are
parameterised by (``format07``, ``format08``)."""
