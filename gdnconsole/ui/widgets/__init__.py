"""Widgets: each renders what it is given; none does I/O."""
