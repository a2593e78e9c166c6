# pragma version ~=0.4.0
count: public(uint256)
owner: public(address)

event Counted:
    by: indexed(address)
    count: uint256

@deploy
def __init__(start: uint256):
    self.count = start
    self.owner = msg.sender

@external
def bump(by: uint256) -> uint256:
    assert by < 100, "too much"
    self.count += by
    log Counted(by=msg.sender, count=self.count)
    return self.count
