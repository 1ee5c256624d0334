"""Small kernels written in the patterns held-out libraries use (test data for the static reader;
read, never imported by it). Written for tiletune; no library code."""
