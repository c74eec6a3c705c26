"""The Textual app: one module per tab, shared widgets, theme loading.

Only the faces (``eloledger.cli``) import this package; the core never does.
"""
