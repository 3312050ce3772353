import BoardCRDT
import Testing
@testable import syncclient

/// The shop's pictures on screen (PV8): which the screen asks for, where they
/// are drawn, the detail's pager, and text instead under `NO_COLOR`.
@Suite struct ShopPictureScreenTests {
    private func controller(width: Int = 110, height: Int = 32) -> ShopController {
        var controller = ShopController(boardName: "demo", name: "ana", width: width, height: height)
        _ = controller.react(to: .snapshot(LinkSnapshot(board: BanchanShop.initialState, state: .live, clients: 1, names: ["ana"],
                                                        version: 1, refusal: nil, unacknowledged: 0), previous: nil))
        return controller
    }

    private let red = PictureState.ready(Thumbnail(width: 4, height: 4, pixels: Array(repeating: 0xFF0000FF, count: 16)))

    @Test func theListAsksForTheFirstPictureOfEveryDishOnScreenFocusedFirst() throws {
        var c = controller()
        _ = c.react(to: .input(.key(.down)))
        let focused = try #require(c.focusedDish)
        let wanted = c.wantedPictures(colour: .ansi256)
        #expect(wanted.first == focused.images.first)
        #expect(Set(wanted) == Set(BanchanShop.initialState.dishes.compactMap(\.images.first)), "all 12 dishes fit on a 32-row screen")
        #expect(c.wantedPictures(colour: .none).isEmpty, "no colour: no pictures")
        #expect(controller(width: 60, height: 20).wantedPictures(colour: .ansi256).isEmpty, "no room beside a 60-column list")
    }

    @Test func theFocusedDishsPictureIsDrawnBesideTheListOnceItArrives() throws {
        var c = controller()
        _ = c.react(to: .input(.key(.down)))
        let name = try #require(c.focusedDish?.images.first)
        #expect(!c.render(colour: .ansi256).joined().contains("▀"))
        #expect(c.render(colour: .ansi256).joined().contains("..."), "a placeholder while it comes")
        #expect(c.react(to: .picture(name: name, red)) == [.redraw])
        let pane = try #require(ShopScreen.previewPane(width: 110, height: 32))
        let lines = c.render(colour: .ansi256)
        #expect(lines[pane.y + 1].contains("\u{1B}[0;38;5;196;48;5;196m▀"), "red half blocks in the pane")
        // A picture that cannot be shown says why.
        var failing = controller()
        _ = failing.react(to: .input(.key(.down)))
        _ = failing.react(to: .picture(name: name, .failed("galbijjim.svg: HTTP 404")))
        #expect(failing.render(colour: .ansi256).joined().contains("galbijjim.svg: HTTP 404"))
    }

    @Test func theDetailPagesThroughTheDishsPicturesWithBrackets() throws {
        var c = controller()
        _ = c.react(to: .input(.key(.down)))
        _ = c.react(to: .input(.key(.enter)))
        let dish = try #require(c.focusedDish)
        let names = ShopController.pictureNames(of: dish)
        #expect(names.count == 2)
        #expect(c.wantedPictures(colour: .ansi256) == names)
        #expect(c.shownPicture == names[0])
        _ = c.react(to: .picture(name: names[1], red))
        #expect(!c.render(colour: .ansi256).joined().contains("▀"), "the first is not there yet")
        #expect(c.react(to: .input(.key(.character("]")))) == [.redraw])
        #expect(c.shownPicture == names[1])
        let text = c.render(colour: .ansi256).joined(separator: "\n")
        #expect(text.contains("▀") && text.contains("사진 2/2"))
        _ = c.react(to: .input(.key(.character("]"))))
        #expect(c.shownPicture == names[0], "the pager wraps")
        _ = c.react(to: .input(.key(.character("["))))
        #expect(c.shownPicture == names[1])
        // A click on the picture turns the pager too.
        let area = try #require(ShopScreen.detailPicture(width: 110, height: 32))
        _ = c.react(to: .input(.mouse(MouseEvent(action: .press, button: .left, x: area.x + 3, y: area.y + 2))))
        #expect(c.shownPicture == names[0])
    }

    @Test func withoutColourTheDetailCountsThePicturesInstead() {
        var c = controller()
        _ = c.react(to: .input(.key(.down)))
        _ = c.react(to: .input(.key(.enter)))
        let text = c.render(colour: .none).joined(separator: "\n")
        #expect(text.contains("2 pictures (shown on the page: /shop/demo)"))
        #expect(!text.contains("사진"))
    }
}
