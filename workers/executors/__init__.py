"""Built-in executors; importing this package registers one per component."""

from workers.executors import ai_tampered, claims, domain, media_preprocess, techniques

__all__ = ["ai_tampered", "claims", "domain", "media_preprocess", "techniques"]
