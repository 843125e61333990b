"""Suite-wide settings: property tests judge behaviour, not speed (CI shares 2 cores)."""

from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
