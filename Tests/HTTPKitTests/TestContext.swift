import HTTPKit

/// The request context of the HTTP layer's own tests: nothing beyond the request.
struct TestContext: RequestContext {
    init(request: Request) {}
}
