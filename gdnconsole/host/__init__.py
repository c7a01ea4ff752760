"""One GPU host: how it is reached, what runs there, and the simulated host on this machine."""
