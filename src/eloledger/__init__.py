"""eloledger: what each extra token of test-time compute buys, in numbers you can defend."""

__version__ = "0.1.0"
