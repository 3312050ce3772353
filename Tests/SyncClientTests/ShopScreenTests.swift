import BoardCRDT
import Foundation
import Testing
@testable import syncclient

/// The shop in a terminal (docs/rules/shop.md PV8), driven without one.
@Suite struct ShopScreenTests {
    private func controller(_ state: BanchanShop.State = BanchanShop.initialState, width: Int = 90, height: Int = 28) -> ShopController {
        var controller = ShopController(boardName: "demo", name: "ana", width: width, height: height)
        _ = controller.react(to: .snapshot(LinkSnapshot(board: state, state: .live, clients: 2, names: ["ana", "bo"], version: 3,
                                                        refusal: nil, unacknowledged: 0), previous: nil))
        return controller
    }

    private func key(_ key: Key) -> ScreenEvent<BanchanShop> { .input(.key(key)) }

    private func sends(_ actions: [ShopAction]) -> [BanchanShop.Intent] {
        actions.compactMap { if case let .send(intent) = $0 { intent } else { nil } }
    }

    /// The visible width of a rendered line: escape sequences take none, Hangul two columns.
    private func columns(_ line: String) -> Int {
        var count = 0, escape = false
        for character in line {
            if character == "\u{1B}" { escape = true; continue }
            if escape { if character.isLetter { escape = false }; continue }
            count += Canvas.columns(character)
        }
        return count
    }

    @Test func theListShowsSectionsInOrderWithTheirDishesPricesAndStock() {
        let c = controller()
        #expect(c.rows.first == .section(.main))
        #expect(c.rows.filter { if case .section = $0 { true } else { false } } == [.section(.main), .section(.soup), .section(.side)])
        let text = c.render(colour: .none).joined(separator: "\n")
        #expect(text.contains("소갈비찜  12,900원 (was 15,900원) [이벤트특가]"))
        #expect(text.contains("소불고기") && text.contains("품절"))
        #expect(text.contains("판매 중지"), "육개장 is off sale")
        #expect(text.contains("2개 남음"), "감자조림 has 2")
    }

    @Test(arguments: [(90, 28), (60, 20), (41, 12)])
    func everyLineIsExactlyTheTerminalsWidthWithHangulTakingTwoColumns(width: Int, height: Int) {
        for colour in [ColourMode.none, .ansi256] {
            var c = controller(width: width, height: height)
            let lines = c.render(colour: colour)
            #expect(lines.count == height)
            #expect(lines.allSatisfy { columns($0) == width }, "\(lines.map { columns($0) })")
            _ = c.react(to: key(.down))
            _ = c.react(to: key(.enter))
            #expect(c.render(colour: colour).allSatisfy { columns($0) == width })
        }
    }

    @Test func enterOnAHeaderCountsItsDishes() {
        var c = controller()
        _ = c.react(to: key(.enter))
        #expect(c.message == "메인반찬: 4 items")
        #expect(c.page == .list)
    }

    @Test func aDishIsOrderedWithItsQuantityAtThePriceShown() {
        var c = controller()
        _ = c.react(to: key(.down))            // 소갈비찜
        _ = c.react(to: key(.enter))
        #expect(c.page == .detail("galbijjim"))
        _ = c.react(to: key(.character("+")))
        _ = c.react(to: key(.character("+")))
        _ = c.react(to: key(.character("-")))
        #expect(sends(c.react(to: key(.character("o")))) == [.order([OrderLine(dish: "galbijjim", quantity: 2, price: 12_900)])])
        // The ack's message comes with a snapshot: shown, back on the list (PV5).
        var snapshot = LinkSnapshot<BanchanShop>(board: BanchanShop.initialState, state: .live, clients: 2, names: [], version: 4,
                                                 refusal: nil, unacknowledged: 0)
        snapshot.answers = ["주문이 완료되었습니다"]
        _ = c.react(to: .snapshot(snapshot, previous: nil))
        #expect(c.page == .list && c.message == "주문이 완료되었습니다")
    }

    @Test func aSoldOutOrRemovedDishIsNotOrderedAndARefusalIsShown() {
        var c = controller()
        for _ in 0..<4 { _ = c.react(to: key(.down)) }   // 소불고기, stock 0
        _ = c.react(to: key(.enter))
        #expect(sends(c.react(to: key(.character("o")))).isEmpty)
        #expect(c.messageIsRefusal)
        var gone = BanchanShop.initialState
        gone.dishes.removeAll { $0.id == "bulgogi" }
        var snapshot = LinkSnapshot<BanchanShop>(board: gone, state: .live, clients: 2, names: [], version: 5,
                                                 refusal: "line 1: the price is now 9900 won", unacknowledged: 0)
        snapshot.refusals = 1
        _ = c.react(to: .snapshot(snapshot, previous: nil))
        #expect(c.render(colour: .none).joined().contains("removed"))
        #expect(c.message == "line 1: the price is now 9900 won" && c.messageIsRefusal)
        _ = c.react(to: key(.escape))
        #expect(c.page == .list)
    }

    @Test func aStateFrameReadsBackAsTheShop() throws {
        let state = BanchanShop.initialState
        let frame = "{\"type\":\"state\",\"board\":\"demo\",\"kind\":\"shop\",\"version\":1,\"clients\":1,\"names\":[],"
            + BanchanShop.stateMembers(state) + "}"
        let read = try #require(BanchanShop.state(fromFrame: Data(frame.utf8)))
        #expect(read.dishes == state.dishes)
        #expect(read.orders.isEmpty)
    }
}

/// The canvas with wide characters (Hangul: two columns in a terminal):
/// every line stays exactly its width however text overlaps.
@Suite struct WideCanvasTests {
    /// Columns of a plain line, counted without the canvas's own table: a
    /// Hangul syllable or CJK character is two, anything else one.
    private func columns(_ line: String) -> Int {
        line.unicodeScalars.reduce(0) { $0 + ((0xAC00...0xD7A3).contains($1.value) || (0x4E00...0x9FFF).contains($1.value) ? 2 : 1) }
    }

    @Test func writingOverHalvesOfWideCharactersKeepsTheWidth() {
        var canvas = Canvas(width: 6, height: 1)
        canvas.write("가나다", x: 0, y: 0, style: .plain)
        #expect(canvas.lines(colour: .none) == ["가나다"])
        canvas.write("라", x: 1, y: 0, style: .plain)            // over the right half of 가 and the left of 나
        #expect(columns(canvas.lines(colour: .none)[0]) == 6, "\(canvas.lines(colour: .none))")
        canvas.put("x", x: 5, y: 0, style: .plain)                // over the right half of 다
        #expect(columns(canvas.lines(colour: .none)[0]) == 6, "\(canvas.lines(colour: .none))")
        canvas.fill(Rect(x: 0, y: 0, width: 3, height: 1), style: .plain)
        #expect(columns(canvas.lines(colour: .none)[0]) == 6, "\(canvas.lines(colour: .none))")
    }

    @Test func aWideCharacterAtTheLastColumnIsASpace() {
        var canvas = Canvas(width: 5, height: 1)
        canvas.write("ab가나", x: 0, y: 0, style: .plain)      // 나 would need columns 4 and 5
        #expect(canvas.lines(colour: .none) == ["ab가 "])
        canvas.put("다", x: 4, y: 0, style: .plain)
        #expect(canvas.lines(colour: .none) == ["ab가 "])
    }
}
