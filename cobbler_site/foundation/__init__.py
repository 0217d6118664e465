"""The foundation the apps stand on: what every app may import, and which imports no app.

Access (the one rule behind every route, API view, form and task), throttling, htmx request
types, the API's input rules, schema and error shapes, text and CSV safety, and the error and
log filters the settings name. ``tests/foundation/test_layering.py`` holds it to that: nothing
here imports ``annotations``, ``judging`` or ``analysis``, nor the wiring above them
(``cobbler_site.wiring``, ``cobbler_site.management``, the URLs and settings).
"""
