import Foundation
import Testing

/// `syncclient watch` on a banchan shop (`/shop/NAME`, docs/rules/shop.md
/// PV8, PC1) run for real: two people, each in a tmux pane, against the real
/// hub. Everything is waited for, nothing is timed.
@Suite(.serialized) struct ShopWatchTests {
    /// The stock of `dish` as the hub has it (`syncclient shop list --json`).
    static func hubStock(_ url: String, _ dish: String) -> (stock: Int, sold: Int)? {
        guard let result = try? syncclient(["shop", "list", url, "--json"]), result.status == 0,
              let object = jsonObject(result.output.trimmingCharacters(in: .whitespacesAndNewlines)),
              let sections = object["sections"] as? [[String: Any]] else { return nil }
        for section in sections {
            for found in section["dishes"] as? [[String: Any]] ?? [] where found["id"] as? String == dish {
                return (found["stock"] as? Int ?? -1, found["sold"] as? Int ?? -1)
            }
        }
        return nil
    }

    private func watch(_ url: String, name: String) throws -> TmuxSession {
        try TmuxSession([Build.syncclient.path, "watch", url, "--name", name], width: 90, height: 28)
    }

    @Test func oneOrdersTheLastDishWhileTheOtherLooksAtIt() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/shop/race"
        // The last 감자조림 (P3's sample has 2): one left.
        let set = try syncclient(["shop", "set-stock", url, "gamjajorim", "1"])
        #expect(set.status == 0, "set-stock: \(set.errors)")

        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for screen in [ana, bo] {
            // PV8: sections, prices (the original struck or shown as "was"), badges, stock.
            screen.waitFor("the list, live") { s in
                s.text.contains("live") && s.text.contains("메인반찬") && s.text.contains("국.찌개") && s.text.contains("밑반찬")
                    && s.text.contains("소갈비찜") && s.text.contains("12,900원") && s.text.contains("[이벤트특가]")
                    && s.text.contains("감자조림") && s.text.contains("1개 남음")
            }
            // The last row is 감자조림: its detail.
            screen.type("\u{1B}[F")   // End
            screen.type("\r")
            screen.waitFor("감자조림's detail, one left") { $0.text.contains("감자조림") && $0.text.contains("재고 1") && $0.text.contains("주문하기") }
        }
        // A header's count (PV1): from bo's list... later; first the order.
        ana.type("o")
        ana.waitFor("ana's order taken, back on the list") { $0.text.contains("주문이 완료되었습니다") && $0.text.contains("메인반찬") }
        // Bo, still looking at it, sees it sold out (PV6) and cannot order it.
        bo.waitFor("sold out on bo's open detail") { $0.text.contains("품절 (sold out)") }
        bo.type("o")
        bo.waitFor("bo told it cannot be ordered") { $0.text.contains("cannot be ordered now") }
        let ok = eventually(timeout: 20) { Self.hubStock(url, "gamjajorim").map { $0 == (0, 1) } ?? false }
        #expect(ok, "the hub's 감자조림: \(String(describing: Self.hubStock(url, "gamjajorim")))")
        // Back to the list, and a section header's count (PV1).
        bo.type("\u{1B}")
        bo.waitFor("bo's list") { $0.text.contains("메인반찬") && !$0.text.contains("주문하기") }
        bo.type("\u{1B}[H")       // Home: the first header
        bo.type("\r")
        bo.waitFor("the count of 메인반찬") { $0.text.contains("메인반찬: 4 items") }
    }

    /// PV8's pictures: a PNG the shop's staff stored, fetched by the terminal
    /// over HTTP, decoded and drawn in half-block characters beside the list
    /// and in the detail; the sample's SVGs the same way; without colour,
    /// text only.
    @Test func picturesAreDrawnInHalfBlocksAndCountedWithoutColour() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/shop/pictures"
        // 4 x 2 pixels: red, green, blue, white over black, grey and nothing.
        let png = Data(base64Encoded:
            "iVBORw0KGgoAAAANSUhEUgAAAAQAAAACCAYAAAB/qH1jAAAAHklEQVR4nC3GsQEAMAzDIPx5PleXMrFoYSmgu/vlAcFICXwqAVBIAAAAAElFTkSuQmCC")!
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pixels-\(getpid()).png")
        try png.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let put = try syncclient(["shop", "image", "put", url, file.path, "--name", "pixels.png"])
        #expect(put.status == 0, "image put: \(put.errors)")
        let add = try syncclient(["shop", "add", url, "side", "픽셀", "1000", "--id", "pixels", "--stock", "5", "--thumb", "pixels.png"])
        #expect(add.status == 0, "add: \(add.errors)")

        let screen = try TmuxSession([Build.syncclient.path, "watch", url, "--name", "ana"], width: 110, height: 32,
                                     environment: ["COLORTERM": "truecolor", "NO_COLOR": ""])  // (the test runner may set NO_COLOR)
        screen.waitFor("the list, live") { $0.text.contains("live") && $0.text.contains("픽셀") }
        screen.type("\u{1B}[F")   // End: the last row, 픽셀
        screen.waitFor("픽셀 focused") { $0.text.contains("▶ 픽셀") }
        // Beside the list: the PNG's six opaque colours, in half blocks.
        let colours = ["38;5;196", "38;5;46", "38;5;21", "38;5;231", "48;5;16", "48;5;244"]
        let drawn = eventually(timeout: 20) {
            let shown = screen.captureWithColours()
            return shown.contains("▀")
                && colours.allSatisfy { shown.contains("\u{1B}[\($0)m") || shown.contains(";\($0)m") || shown.contains("[\($0);") }
        }
        #expect(drawn, "the PNG beside the list:\n\(screen.captureWithColours())")
        // The detail: a sample dish's SVG picture and its pager.
        screen.type("\u{1B}[H")   // Home
        screen.type("\u{1B}[B")   // Down: 소갈비찜
        screen.type("\r")
        screen.waitFor("소갈비찜's pictures") { $0.text.contains("사진 1/2") && $0.text.contains("▀") && $0.text.contains("주문하기") }
        screen.type("]")
        screen.waitFor("the second picture") { $0.text.contains("사진 2/2") && $0.text.contains("▀") }

        let plain = try TmuxSession([Build.syncclient.path, "watch", url, "--name", "bo"], width: 110, height: 32,
                                    environment: ["NO_COLOR": "1"])
        plain.waitFor("the list, live, without colour") { $0.text.contains("live") && $0.text.contains("픽셀") }
        plain.type("\u{1B}[B")
        plain.type("\r")
        plain.waitFor("pictures counted, not drawn") { $0.text.contains("2 pictures (shown on the page: /shop/pictures)") }
        #expect(!plain.capture().contains("▀") && !plain.capture().contains("▄"))
    }
}
