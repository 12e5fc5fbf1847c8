#include "tpuc/Interfaces/Traits.h"

using namespace mlir;

LogicalResult tpuc::verifyKnownAttributes(Operation *op) {
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (!attr.getName().getValue().contains('.'))
      return op->emitOpError() << "has unknown attribute '"
                               << attr.getName().getValue() << "'";
  return success();
}
