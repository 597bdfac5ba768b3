"""solitaire-race: race friends on the same solitaire deal."""

__version__ = "0.1.0"
