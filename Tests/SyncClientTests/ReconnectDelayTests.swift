import Testing
@testable import syncclient

/// How long `watch` and the bench's links wait before connecting again.
struct ReconnectDelayTests {
    @Test func aCloseByAnOperatorKeepsTheClientAwayThirtySecondsAndSpreadsTheReturns() {
        for attempt in [1, 2, 9] {
            #expect(ReconnectDelay.seconds(closeCode: 4409, attempt: attempt, jitter: 0.7) == 30)
            #expect(abs(ReconnectDelay.seconds(closeCode: 4409, attempt: attempt, jitter: 1.3) - 39) < 1e-9)
        }
    }

    @Test func otherLossesBackOffFromAQuarterSecondDoublingUpToEight() {
        let delays = (1...9).map { ReconnectDelay.seconds(closeCode: 1012, attempt: $0, jitter: 1) }
        #expect(delays == [0.25, 0.5, 1, 2, 4, 8, 8, 8, 8])
        #expect(ReconnectDelay.seconds(closeCode: nil, attempt: 1, jitter: 1.3) == 0.25 * 1.3)
        #expect(ReconnectDelay.seconds(closeCode: 1006, attempt: 0, jitter: 1) == 0.25, "an attempt below 1 counts as the first")
    }

    @Test func theStatusBarSaysWhoPutTheClientOutAndWhenItComesBack() {
        #expect(ConnectionState.putOut.label == "Put out by an operator; back in about 30 s")
    }
}
