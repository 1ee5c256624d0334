"""Small kernels written in the forms a second round of held-out libraries uses, some deliberately unreadable
(test data for the static reader; read by it, never imported; tests lower them through Triton). Written for
tiletune; no library code."""
