import Foundation

/// The browser client's static files (`Sources/SyncHub/Web`), read once at
/// start and served from memory: `/` and `/b/NAME` give the page.
struct WebAssets {
    private var files: [String: (type: String, body: [UInt8])] = [:]

    init() {
        guard let directory = Bundle.module.resourceURL?.appendingPathComponent("Web") else { return }
        let types = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
                     "css": "text/css; charset=utf-8", "png": "image/png", "svg": "image/svg+xml"]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names {
            let url = directory.appendingPathComponent(name)
            guard let type = types[url.pathExtension], let data = try? Data(contentsOf: url) else { continue }
            files["/" + name] = (type, Array(data))
        }
    }

    /// The file for a GET path, if it is one of the page's.
    func file(for path: String) -> (type: String, body: [UInt8])? {
        if path == "/" || path.hasPrefix("/b/") { return files["/index.html"] }
        return files[path]
    }
}
