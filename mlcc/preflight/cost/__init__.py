"""What the stack costs: prices (snapshot and Price List API), the estimate, the budget."""
