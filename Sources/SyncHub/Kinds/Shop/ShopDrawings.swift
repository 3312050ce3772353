import BoardCRDT
import Crypto
import Foundation

/// The sample catalog's pictures (P3), drawn here as SVG: a bowl or a plate
/// seen from above with the dish's colours, steam over soups. Nothing is
/// copied; every picture comes from the dish's id and section.
enum ShopDrawings {
    struct Picture {
        let bytes: [UInt8]
        /// `"sha256-<first 32 hex digits>"`, quoted as an ETag is.
        let etag: String
    }

    /// Every sample picture by name (`ID.svg`, `ID-detail.svg`), drawn once.
    static let pictures: [String: Picture] = {
        var all: [String: Picture] = [:]
        for dish in SampleCatalog.dishes {
            let palette = Palette(dish.id)
            all[dish.id + ".svg"] = picture(thumbnail(dish, palette))
            all[dish.id + "-detail.svg"] = picture(detail(dish, palette))
        }
        return all
    }()

    static func picture(_ text: String) -> Picture {
        let bytes = Array(text.utf8)
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        return Picture(bytes: bytes, etag: "\"sha256-\(digest.prefix(32))\"")
    }

    /// Colours drawn from the id: a sauce, a main ingredient, a garnish.
    struct Palette {
        let sauce: String, food: String, garnish: String, rim: String
        let seed: UInt64
        init(_ id: String) {
            var hash: UInt64 = 1469598103934665603
            for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 1099511628211 }
            seed = hash
            let sauces = ["#b5442c", "#c8762f", "#8a4b2a", "#d9a441", "#a83a32", "#6e8b3d", "#caa472", "#3f5e2a"]
            let foods = ["#7a3b22", "#e2c08d", "#f1e4c8", "#5b2a17", "#c9552f", "#2f2a25", "#e8d36a", "#9c6b3f"]
            let garnishes = ["#3d8b37", "#f4f1e8", "#e63b2e", "#1f6e3a", "#f0c419"]
            let rims = ["#f5f1ea", "#e9e3d8", "#2f3b4a", "#dfe7ea"]
            sauce = sauces[Int(hash % 8)]
            food = foods[Int((hash >> 8) % 8)]
            garnish = garnishes[Int((hash >> 16) % 5)]
            rim = rims[Int((hash >> 24) % 4)]
        }

        /// A repeatable sequence of numbers in 0..<n.
        func numbers(_ count: Int, below n: Int, salt: UInt64) -> [Int] {
            var state = seed ^ salt
            return (0..<count).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Int((state >> 33) % UInt64(n))
            }
        }
    }

    static func thumbnail(_ dish: Dish, _ palette: Palette) -> String {
        let soup = dish.section == .soup
        var out = ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 160 160" width="160" height="160">"##
        out += ##"<rect width="160" height="160" fill="#f3ede2"/>"##
        out += ##"<ellipse cx="80" cy="86" rx="70" ry="64" fill="#00000018"/>"##
        out += ##"<circle cx="80" cy="80" r="66" fill="\##(palette.rim)" stroke="#00000022" stroke-width="2"/>"##
        out += ##"<circle cx="80" cy="80" r="\##(soup ? 52 : 48)" fill="\##(palette.sauce)"/>"##
        out += pieces(palette, center: 80, radius: soup ? 40 : 38, count: soup ? 5 : 9, size: soup ? 10 : 12)
        if soup {
            for x in [62, 80, 98] {
                out += ##"<path d="M\##(x) 30 q 8 -8 0 -16 q -8 -8 0 -16" fill="none" stroke="#ffffffaa" stroke-width="3" "## +
                       ##"stroke-linecap="round"/>"##
            }
        }
        return out + "</svg>"
    }

    static func detail(_ dish: Dish, _ palette: Palette) -> String {
        var out = ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 480 320" width="480" height="320">"##
        out += ##"<rect width="480" height="320" fill="#efe6d6"/>"##
        out += ##"<rect x="0" y="230" width="480" height="90" fill="#d8c7a8"/>"##
        out += ##"<ellipse cx="240" cy="175" rx="170" ry="120" fill="\##(palette.rim)" stroke="#00000022" stroke-width="3"/>"##
        out += ##"<ellipse cx="240" cy="170" rx="130" ry="88" fill="\##(palette.sauce)"/>"##
        out += pieces(palette, center: 240, radius: 90, count: 14, size: 18, squash: 0.66, centerY: 170)
        out += ##"<rect x="40" y="262" width="120" height="10" rx="5" fill="#8b6b45"/><rect x="330" y="258" width="10" height="50" "## +
               ##"rx="5" fill="#8b6b45"/>"##
        return out + "</svg>"
    }

    /// Pieces of the main ingredient and a garnish, spread over the dish.
    static func pieces(_ palette: Palette, center: Int, radius: Int, count: Int, size: Int, squash: Double = 1,
                       centerY: Int? = nil) -> String {
        let angles = palette.numbers(count, below: 360, salt: 1)
        let distances = palette.numbers(count, below: max(1, radius - size), salt: 2)
        var out = ""
        for index in 0..<count {
            let angle = Double(angles[index]) * .pi / 180
            let x = Double(center) + cos(angle) * Double(distances[index])
            let y = Double(centerY ?? center) + sin(angle) * Double(distances[index]) * squash
            out += ##"<ellipse cx="\##(Int(x))" cy="\##(Int(y))" rx="\##(size)" ry="\##(size * 3 / 4)" fill="\##(palette.food)" "## +
                   ##"transform="rotate(\##(angles[index]) \##(Int(x)) \##(Int(y)))"/>"##
        }
        let garnish = palette.numbers(count, below: 360, salt: 3)
        for index in 0..<count {
            let angle = Double(garnish[index]) * .pi / 180
            let x = Double(center) + cos(angle) * Double(distances[(index + 1) % count])
            let y = Double(centerY ?? center) + sin(angle) * Double(distances[(index + 1) % count]) * squash
            out += ##"<circle cx="\##(Int(x))" cy="\##(Int(y))" r="\##(max(2, size / 4))" fill="\##(palette.garnish)"/>"##
        }
        return out
    }
}
