"""The 0.8 line's cluster model: a replicated partition (ISR, high watermark, leader epoch) and the cluster snapshot."""
