"""The HTTP layer: one FastAPI application serving pages and the JSON API."""
