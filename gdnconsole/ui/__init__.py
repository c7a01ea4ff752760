"""The Textual user interface: screens and widgets that render state; I/O runs in workers."""
