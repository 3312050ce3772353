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
}
