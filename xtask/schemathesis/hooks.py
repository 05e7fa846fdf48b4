"""Schemathesis hooks of `cargo xtask test` and `cargo xtask fuzz-api` (xtask/src/fuzz_api.rs).

The run authenticates with one admin API key, and the API lets an admin revoke any key of the
account, that one included: a generated `DELETE /api_keys/{id}` naming it (an id the stateful
phase finds in `GET /me` or `GET /api_keys`) would leave every later request a 401 and the run
testing nothing. Such a request is sent for a well-formed id that does not exist instead (404,
still checked); every other key is deleted as generated.
"""

import os

import requests
import schemathesis

_own_key_id = None


def _own_key(case):
    """The id of the run's key, from `GET /me` (asked once)."""
    global _own_key_id
    if _own_key_id is None:
        base = os.environ["TUNNEL_FUZZ_BASE_URL"]
        headers = {
            "Authorization": "Bearer " + os.environ["TUNNEL_FUZZ_API_KEY"],
            "Service-Version": "2",
        }
        me = requests.get(base + "/me", headers=headers, timeout=30)
        me.raise_for_status()
        _own_key_id = me.json()["api_key_id"]
    return _own_key_id


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() == "DELETE" and case.path == "/api_keys/{id}":
        if case.path_parameters.get("id") == _own_key(case):
            case.path_parameters["id"] = "ak_" + "0" * 27
