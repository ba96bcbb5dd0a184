"""Messages and message sets of both lines: the 0.7 message (``message``), the codecs (``compression``), the
one entry walker (``entries``) and the entry formats it is parameterised by (``format07``, ``format08``)."""
