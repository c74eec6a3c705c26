"""Provider profiles: name a gateway once, derive each client's settings, switch safely."""
