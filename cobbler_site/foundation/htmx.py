"""The request type of views that read ``request.htmx`` (set by django-htmx's middleware).

HttpRequest alone does not declare the attribute, so mypy needs this subclass in the hints;
at run time every request is a plain HttpRequest with ``htmx`` added by the middleware.
"""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
