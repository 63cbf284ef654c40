#
Keetro,#
loc:0#c31ol‹or:#2in:1}ma