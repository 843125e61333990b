"""The real Prometheus and the fake engine fleet it scrapes (fleet.py), one per test module."""

from fleet import scraped

__all__ = ["scraped"]
