import BoardCRDT

/// The fast path for thin-client intents, the hub's hottest input: reads a
/// flat JSON object of plain strings and integers in place. Anything it does
/// not fully recognise (escapes, nesting, other types, duplicate keys, an
/// unknown field, a bad value) returns nil, and the frame goes through the
/// full decoder, which gives the precise error. So both paths accept exactly
/// the same frames.
public enum ThinIntentScanner {
    public static func scan(_ bytes: UnsafeRawBufferPointer) -> ClientMessage<LetterBoard>? {
        var index = 0
        var fields: (letter: Letter?, to: Int?, ref: String?, key: String?) = (nil, nil, nil, nil)
        var seen: UInt8 = 0
        func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        func string() -> UnsafeRawBufferPointer? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let start = index + 1
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                if bytes[end] == UInt8(ascii: "\\") || bytes[end] < 0x20 { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            index = end + 1
            return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        }
        func integer() -> Int? {
            var value = 0
            let start = index
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            // JSON forbids leading zeros: leave "01" to the full decoder.
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "0"),
               bytes[index + 1] >= UInt8(ascii: "0"), bytes[index + 1] <= UInt8(ascii: "9") { return nil }
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                guard index - start < 9 else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard index > start + (negative ? 1 : 0) else { return nil }
            return negative ? -value : value
        }
        func equals(_ buffer: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
            buffer.count == text.utf8CodeUnitCount && buffer.elementsEqual(UnsafeBufferPointer(start: text.utf8Start,
                                                                                               count: text.utf8CodeUnitCount))
        }

        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var typeName: UnsafeRawBufferPointer?
        while true {
            skipSpace()
            guard let key = string() else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            let bit: UInt8 = equals(key, "type") ? 1 : equals(key, "letter") ? 2 : equals(key, "to") ? 4 : equals(key, "ref") ? 8
                : equals(key, "key") ? 16 : 0
            guard bit != 0, seen & bit == 0 else { return nil }
            seen |= bit
            if bit == 1 {
                guard let value = string() else { return nil }
                typeName = value
            } else if bit == 2 {
                guard let value = string(), value.count == 1, let letter = Letter(index: Int(value[0]) - 65) else { return nil }
                fields.letter = letter
            } else if bit == 4 {
                guard let value = integer() else { return nil }
                fields.to = value
            } else {
                // Byte counts bound character counts from above; a longer
                // value may still be in bounds, so the full decoder decides.
                let limit = bit == 8 ? ClientLimits.maxRefLength : ClientLimits.maxKeyLength
                guard let value = string(), value.count <= limit, bit == 8 || value.count > 0 else { return nil }
                // Invalid UTF-8 would be repaired by decoding; let the full decoder refuse it.
                guard let text = JSONFields.utf8String(value) else { return nil }
                if bit == 8 { fields.ref = text } else { fields.key = text }
            }
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            break
        }
        skipSpace()
        guard index == bytes.count, let typeName else { return nil }
        if equals(typeName, "select"), let letter = fields.letter, fields.to == nil {
            return .intent(.select(letter), ref: fields.ref, key: fields.key)
        }
        if equals(typeName, "deselect"), let letter = fields.letter, fields.to == nil {
            return .intent(.deselect(letter), ref: fields.ref, key: fields.key)
        }
        if equals(typeName, "move"), let letter = fields.letter, let to = fields.to {
            return .intent(.move(letter, to: to), ref: fields.ref, key: fields.key)
        }
        if equals(typeName, "reset"), fields.letter == nil, fields.to == nil {
            return .intent(.reset, ref: fields.ref, key: fields.key)
        }
        return nil
    }
}
