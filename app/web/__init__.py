"""Web plumbing shared by every page: templates, htmx helpers, security headers, errors."""
