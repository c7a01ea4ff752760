"""`gdnconsole demo --scenario NAME`: stories (``stories``) played on the real dashboard against
simulated hosts (``player``)."""
