-- wrk: every request asks for gzip, as browsers and the mobile SDKs do.
wrk.headers["Accept-Encoding"] = "gzip"
