"""Bot players: they race through the same protocol as a person, from their own view only.

- ``policy``: the pure choice of the next move from a player view (foundation moves first,
  no pointless repetition, resign when nothing useful is left).
- ``runner``: asyncio bot clients (``run_bot``, ``run_bots``) and the ``solitaire-race bot``
  command; usable as a library by a load generator.
"""
