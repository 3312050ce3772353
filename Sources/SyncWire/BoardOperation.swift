import BoardCRDT

/// An operation of the letter board. (Foundation also has an `Operation`.)
public typealias BoardOperation = BoardCRDT.Operation<LetterBoard.Change>
