/// P3: what a shop nobody has used opens with. Four or more dishes a
/// section, every one with a thumbnail drawn by the hub (`ShopDrawings`),
/// some discounted, some with badges, one sold out, one not on sale.
public enum SampleCatalog {
    /// The sample's image names: `ID.svg` (thumbnail and pager) and
    /// `ID-detail.svg` (the detail image) for every sample dish.
    public static var imageNames: [String] { dishes.flatMap { [$0.id + ".svg", $0.id + "-detail.svg"] } }

    public static var state: BanchanShop.State {
        let images = Dictionary(uniqueKeysWithValues: imageNames.map { ($0, ShopImage(type: "image/svg+xml", digest: "", bytes: 0)) })
        return BanchanShop.State(dishes: dishes, images: images)
    }

    public static let dishes: [Dish] = [
        dish("galbijjim", .main, "소갈비찜", "달콤짭짤한 간장 양념에 푹 익힌 소갈비, 무와 당근이 함께 들어 있어요.", 12_900, 15_900, ["이벤트특가"], stock: 7),
        dish("jeyuk", .main, "제육볶음", "매콤한 고추장 양념에 볶은 돼지고기. 밥 한 그릇이 뚝딱.", 8_900, nil, ["베스트"], stock: 20),
        dish("dakbokkeum", .main, "닭볶음탕", "감자와 함께 칼칼하게 졸인 닭볶음탕.", 11_500, 12_500, [], stock: 3),
        dish("bulgogi", .main, "소불고기", "배와 양파로 재운 부드러운 불고기.", 10_900, nil, ["신메뉴", "아이반찬"], stock: 0),
        dish("doenjang", .soup, "된장찌개", "두부와 애호박을 듬뿍 넣은 구수한 된장찌개.", 6_500, nil, [], stock: 15),
        dish("kimchijjigae", .soup, "김치찌개", "잘 익은 김치와 돼지고기로 끓인 김치찌개.", 7_500, 8_500, ["베스트"], stock: 12),
        dish("miyeokguk", .soup, "소고기미역국", "양지로 우려 낸 맑은 미역국.", 6_900, nil, [], stock: 9),
        dish("yukgaejang", .soup, "육개장", "얼큰한 국물에 고사리와 대파를 넣은 육개장.", 8_500, nil, ["한정수량"], stock: 4, available: false),
        dish("myeolchi", .side, "멸치볶음", "바삭하게 볶아 견과류를 더한 잔멸치볶음.", 4_500, nil, ["아이반찬"], stock: 30),
        dish("sigeumchi", .side, "시금치나물", "참기름과 깨로 조물조물 무친 시금치.", 3_500, nil, [], stock: 25),
        dish("kongjaban", .side, "콩자반", "윤기 나게 졸인 검은콩 콩자반.", 3_900, 4_500, ["이벤트특가"], stock: 18),
        dish("gamjajorim", .side, "감자조림", "간장에 달큰하게 졸인 알감자.", 3_900, nil, [], stock: 2),
    ]

    static func dish(_ id: String, _ section: ShopSection, _ title: String, _ description: String, _ price: Int, _ original: Int?,
                     _ badges: [String], stock: Int, available: Bool = true) -> Dish {
        Dish(id: id, section: section, title: title, description: description, price: price, originalPrice: original,
             badges: badges, thumb: id + ".svg", images: [id + ".svg"], detailImages: [id + "-detail.svg"], stock: stock,
             available: available)
    }
}
