import ArgumentParser
import BoardCRDT
import Foundation
import WebSocketLoop

extension BanchanShop: WatchedKind {
    typealias Bench = ShopBench

    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<ShopController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }

    static let watchKeys = """
        Banchan shops (/\(pathSegment)/NAME): Up and Down (j and k) move, Enter on a dish opens it; there + and - set \
        the quantity, o orders it at the price shown, [ and ] page through its pictures, Esc or Backspace \
        goes back to the list; q quits.
        """
    static let sendExample = #"{"type":"order","lines":[{"dish":"galbijjim","quantity":2,"price":12900}]}"#
    static let commands: [any ParsableCommand.Type] = [ShopCommand.self]
}

extension ShopController: KindScreen {
    typealias Kind = BanchanShop

    /// Piped: one line per change of what is on sale, e.g.
    /// `demo v3: galbijjim 12900 x7, jeyuk 8900 x20, ... | ordered: 주문이 완료되었습니다`.
    static func transcriptLine(boardName: String, snapshot: LinkSnapshot<BanchanShop>, previous: LinkSnapshot<BanchanShop>?) -> String? {
        guard previous == nil || previous?.board != snapshot.board || !snapshot.answers.isEmpty else { return nil }
        let dishes = snapshot.board.dishes.map { "\($0.id) \($0.price) x\($0.stock)\($0.available ? "" : " off")" }.joined(separator: ", ")
        var line = "\(boardName) v\(snapshot.version): \(dishes)"
        if let answer = snapshot.answers.last { line += " | \(answer)" }
        return line
    }
}
